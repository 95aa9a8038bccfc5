"""
Reads a Smarter checkout without running it (Python's ast only, no Django, no imports of Smarter) and prints
as JSON what a Celery worker must agree with: every task (`@app.task`, `@shared_task`, `@<app>.task`), every
Celery Beat entry, and the settings their options read (`smarter_settings.<name>`: its environment variable and
default). Usage: python3 smarter_ast.py <checkout>. Python 3.8 or later; the standard library only.
"""

import ast
import json
import os
import sys

UNRESOLVED = object()


def source(node):
    try:
        return ast.unparse(node)
    except AttributeError:  # Python < 3.9
        return ast.dump(node)


def find_root(path):
    """The directory holding the `smarter` package: <checkout>/smarter, or the path itself."""
    for candidate in (os.path.join(path, "smarter"), path):
        if os.path.isdir(os.path.join(candidate, "smarter", "apps")):
            return candidate
    return None


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), filename=path)


class Settings:
    """`smarter_settings.<attr>` → the environment variable and default it is read from."""

    def __init__(self, root):
        conf = os.path.join(root, "smarter", "common", "conf")
        self.defaults = {}
        self.fields = {}
        if not os.path.isdir(conf):
            conf_py = os.path.join(root, "smarter", "common", "conf.py")
            if os.path.isfile(conf_py):
                self.read_defaults(parse(conf_py))
                self.read_fields(parse(conf_py))
            return
        for name in ("defaults.py", "settings.py", "__init__.py"):
            path = os.path.join(conf, name)
            if os.path.isfile(path):
                tree = parse(path)
                self.read_defaults(tree)
                self.read_fields(tree)

    def read_defaults(self, tree):
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "SettingsDefaults"]:
            for stmt in cls.body:
                target, value = assignment(stmt)
                if target is None or value is None:
                    continue
                read = env_read(value)
                if read is not None:
                    self.defaults[target] = read

    def read_fields(self, tree):
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Settings"]:
            for stmt in cls.body:
                target, value = assignment(stmt)
                if target is not None and value is not None:
                    ref = defaults_ref(value)
                    if ref is not None:
                        self.fields[target] = ref
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    returns = [n for n in ast.walk(stmt) if isinstance(n, ast.Return) and n.value is not None]
                    if len(returns) == 1:
                        ref = defaults_ref(returns[0].value)
                        if ref is not None:
                            self.fields[stmt.name] = ref

    def resolve(self, attr):
        name = self.fields.get(attr, attr.upper())
        read = self.defaults.get(name)
        if read is None:
            return {"setting": attr}
        return {"setting": attr, "env": read["env"], "value": read["default"]}


def assignment(stmt):
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    return None, None


def defaults_ref(node):
    """`settings_defaults.NAME`, also as the first argument of `Field(...)`."""
    if isinstance(node, ast.Call) and node.args and call_name(node) == "Field":
        node = node.args[0]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings_defaults":
        return node.attr
    return None


def call_name(node):
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def env_read(node):
    """`get_env("NAME", default)`, `bool_environment_variable("NAME", default)`, wrapped or not in int()/str()."""
    if not isinstance(node, ast.Call):
        return None
    name = call_name(node)
    if name in ("int", "str", "bool", "float") and len(node.args) == 1:
        inner = env_read(node.args[0])
        if inner is not None and name != "bool":
            conv = {"int": int, "str": str, "float": float}[name]
            try:
                inner["default"] = conv(inner["default"])
            except (TypeError, ValueError):
                pass
        return inner
    if name not in ("get_env", "bool_environment_variable"):
        return None
    if not node.args or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        return None
    default_node = node.args[1] if len(node.args) > 1 else None
    for kw in node.keywords:
        if kw.arg == "default":
            default_node = kw.value
    default = None if default_node is None else literal(default_node, {})
    if default is UNRESOLVED:
        default = {"expr": source(default_node)}
    return {"env": node.args[0].value, "default": default}


def literal(node, names):
    """A constant expression: literals, names bound to one, arithmetic, timedelta(...)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.Name) and node.id in names:
        return literal(names[node.id], names)
    if isinstance(node, ast.BinOp):
        left, right = literal(node.left, names), literal(node.right, names)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)):
            ops = {ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b}
            op = ops.get(type(node.op))
            if op is not None:
                return op(left, right)
    if isinstance(node, ast.Call) and call_name(node) == "timedelta":
        units = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
        total = 0
        for kw in node.keywords:
            v = literal(kw.value, names)
            if kw.arg not in units or not isinstance(v, (int, float)):
                return UNRESOLVED
            total += v * units[kw.arg]
        for i, a in enumerate(node.args):
            v = literal(a, names)
            if not isinstance(v, (int, float)):
                return UNRESOLVED
            total += v * (86400, 1)[i] if i < 2 else 0
        return {"seconds": total}
    return UNRESOLVED


class Module:
    def __init__(self, path, name, settings):
        self.tree = parse(path)
        self.path = path
        self.name = name
        self.settings = settings
        self.names = {}
        for stmt in self.tree.body:
            target, value = assignment(stmt)
            if target is not None and value is not None:
                self.names[target] = value

    def value(self, node, depth=0):
        """A decorator or Beat option: a literal, a setting (with its default), or the expression's text."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "smarter_settings":
            return self.settings.resolve(node.attr)
        if isinstance(node, ast.Name) and node.id in self.names and depth < 10:
            return self.value(self.names[node.id], depth + 1)
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    inner = self.value(v, depth + 1)
                    if isinstance(inner.get("value"), dict):
                        out.update(inner["value"])
                    continue
                key = literal(k, {})
                if isinstance(key, str):
                    out[key] = self.value(v, depth + 1)
            return {"value": out}
        v = literal(node, self.names)
        if v is not UNRESOLVED:
            return {"value": v}
        return {"expr": source(node)}


def exception_names(node):
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return [source(e) for e in elts]


def task_decorator(dec):
    """(is a task, its keyword arguments) for @app.task, @app.task(...), @shared_task, @shared_task(...)."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    is_task = (isinstance(target, ast.Attribute) and target.attr == "task") or (
        isinstance(target, ast.Name) and target.id == "shared_task"
    )
    return is_task, (dec.keywords if isinstance(dec, ast.Call) else [])


def signature(module, fn, bound):
    a = fn.args
    positional = list(getattr(a, "posonlyargs", [])) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = []
    for arg, default in zip(positional, defaults):
        p = {"name": arg.arg}
        if default is not None:
            p["default"] = module.value(default)
        params.append(p)
    if bound and params:
        params = params[1:]
    keyword_only = []
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        p = {"name": arg.arg}
        if default is not None:
            p["default"] = module.value(default)
        keyword_only.append(p)
    return {
        "params": params,
        "keywordOnly": keyword_only,
        "varargs": a.vararg.arg if a.vararg else None,
        "varkw": a.kwarg.arg if a.kwarg else None,
    }


def tasks_of(module):
    out = []
    for fn in module.tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in fn.decorator_list:
            is_task, keywords = task_decorator(dec)
            if not is_task:
                continue
            opts = {kw.arg: kw.value for kw in keywords if kw.arg}
            bound = "bind" in opts and literal(opts["bind"], {}) is True
            name = literal(opts["name"], module.names) if "name" in opts else None
            out.append(
                {
                    "name": name if isinstance(name, str) else f"{module.name}.{fn.name}",
                    "file": module.path,
                    "line": fn.lineno,
                    "queue": module.value(opts["queue"]) if "queue" in opts else None,
                    "autoretryFor": exception_names(opts["autoretry_for"]) if "autoretry_for" in opts else None,
                    "maxRetries": module.value(opts["max_retries"]) if "max_retries" in opts else None,
                    "retryBackoff": module.value(opts["retry_backoff"]) if "retry_backoff" in opts else None,
                    "bind": bound,
                    **signature(module, fn, bound),
                }
            )
    return out


def task_modules(root):
    """(path, dotted module name) of every `tasks.py` and `tasks/` package module under smarter/apps."""
    apps = os.path.join(root, "smarter", "apps")
    found = []
    for app in sorted(os.listdir(apps)):
        base = os.path.join(apps, app)
        single = os.path.join(base, "tasks.py")
        if os.path.isfile(single):
            found.append((single, f"smarter.apps.{app}.tasks"))
        package = os.path.join(base, "tasks")
        if os.path.isdir(package):
            for dirpath, dirnames, filenames in os.walk(package):
                dirnames[:] = sorted(d for d in dirnames if d not in ("tests", "__pycache__"))
                for f in sorted(filenames):
                    if not f.endswith(".py") or f.startswith("test"):
                        continue
                    rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    found.append((os.path.join(dirpath, f), ".".join(rel)))
    return found


def beat_schedule(root, settings):
    path = os.path.join(root, "smarter", "workers", "celerybeat.py")
    if not os.path.isfile(path):
        return None
    module = Module(path, "smarter.workers.celerybeat", settings)
    schedule = None
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                last = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else None
                if last in ("beat_schedule", "CELERY_BEAT_SCHEDULE"):
                    schedule = node.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update":
            for kw in node.keywords:
                if kw.arg == "beat_schedule":
                    schedule = kw.value
    if isinstance(schedule, ast.Name) and schedule.id in module.names:
        schedule = module.names[schedule.id]
    if not isinstance(schedule, ast.Dict):
        return {"file": path, "entries": []}
    entries = []
    for k, v in zip(schedule.keys, schedule.values):
        key = literal(k, module.names) if k is not None else None
        fields = {}
        if isinstance(v, ast.Dict):
            for fk, fv in zip(v.keys, v.values):
                fname = literal(fk, {}) if fk is not None else None
                if isinstance(fname, str):
                    fields[fname] = fv
        entry = {"name": key if isinstance(key, str) else source(k), "line": v.lineno}
        task = literal(fields["task"], module.names) if "task" in fields else None
        entry["task"] = task if isinstance(task, str) else None
        entry["schedule"] = beat_when(module, fields.get("schedule"))
        entry["options"] = module.value(fields["options"])["value"] if "options" in fields else {}
        if not isinstance(entry["options"], dict):
            entry["options"] = {"expr": source(fields["options"])}
        for extra in ("args", "kwargs"):
            if extra in fields:
                entry[extra] = module.value(fields[extra])
        entries.append(entry)
    return {"file": path, "entries": entries}


def beat_when(module, node):
    if node is None:
        return None
    if isinstance(node, ast.Call) and call_name(node) == "crontab":
        fields = {}
        for kw in node.keywords:
            v = literal(kw.value, module.names)
            fields[kw.arg] = str(v) if v is not UNRESOLVED else source(kw.value)
        return {"crontab": fields}
    if isinstance(node, ast.Call) and call_name(node) == "schedule":
        for kw in node.keywords:
            if kw.arg == "run_every":
                return beat_when(module, kw.value)
        if node.args:
            return beat_when(module, node.args[0])
    v = literal(node, module.names)
    if isinstance(v, (int, float)):
        return {"seconds": v}
    if isinstance(v, dict) and "seconds" in v:
        return v
    return {"expr": source(node)}


def layout(root):
    apps = os.path.join(root, "smarter", "apps")
    if os.path.isdir(os.path.join(apps, "llmclient")):
        return "adr-030"
    if os.path.isdir(os.path.join(apps, "llm_client")):
        return "llm_client"
    return "unknown"


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: smarter_ast.py <path to a Smarter checkout>\n")
        return 2
    root = find_root(argv[1])
    if root is None:
        sys.stderr.write(f"{argv[1]}: not a Smarter checkout (no smarter/smarter/apps or smarter/apps)\n")
        return 2
    settings = Settings(root)
    tasks, errors = [], []
    for path, name in task_modules(root):
        try:
            tasks.extend(tasks_of(Module(path, name, settings)))
        except SyntaxError as e:
            errors.append(f"{path}: {e}")
    out = {
        "root": root,
        "layout": layout(root),
        "tasks": tasks,
        "beat": beat_schedule(root, settings),
        "errors": errors,
    }
    json.dump(out, sys.stdout, indent=1, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
