"""kombu's own Redis transport (Debian's kombu 5.2.4), driven from the tests to check our layout against it.

usage: kombu_redis.py URL PREFIX COMMAND ARGS...
  get QUEUE         basic_get + ack; prints the message as JSON
  hold QUEUE        basic_get without ack, then exits hard (a crash): the message stays in `unacked`
  restore VT        runs kombu's QoS.restore_visible with visibility_timeout VT (seconds)
  publish QUEUE N   sends N celery.accumulate-style task messages through Celery to QUEUE
  heavy QUEUE BYTES PRIORITY  sends one celery.accumulate whose argument is BYTES characters, at PRIORITY
"""
import json
import os
import sys

from kombu import Connection

url, prefix, cmd = sys.argv[1], sys.argv[2], sys.argv[3]
opts = {'global_keyprefix': prefix} if prefix else {}


def conn(**extra):
    return Connection(url, transport_options={**opts, **extra})


if cmd == 'get':
    with conn() as c:
        ch = c.channel()
        m = ch.basic_get(sys.argv[4], no_ack=False)
        if m is None:
            print(json.dumps(None))
            sys.exit(0)
        out = {'body': m.body.decode() if isinstance(m.body, bytes) else m.body, 'headers': m.headers,
               'properties': m.properties, 'delivery_info': m.delivery_info,
               'delivery_tag': m.delivery_tag, 'content_type': m.content_type}
        m.ack()
        out['unacked_after_ack'] = ch.client.hlen('unacked')
        print(json.dumps(out, default=str))
elif cmd == 'hold':
    with conn() as c:
        ch = c.channel()
        m = ch.basic_get(sys.argv[4], no_ack=False)
        print(json.dumps(m.delivery_tag if m else None))
        sys.stdout.flush()
        os._exit(0)
elif cmd == 'restore':
    with conn(visibility_timeout=float(sys.argv[4])) as c:
        ch = c.channel()
        ch.qos.restore_visible()
        print(json.dumps(ch.client.hlen('unacked')))
        ch.qos._delivered.clear()
elif cmd == 'publish':
    from celery import Celery
    app = Celery('pub', broker=url)
    app.conf.broker_transport_options = opts
    app.conf.task_protocol = int(os.environ.get('PROTOCOL', '2'))
    for i in range(int(sys.argv[5])):
        app.send_task('celery.accumulate', args=(i,), queue=sys.argv[4], task_id='acc-%d' % i)
    print(json.dumps(int(sys.argv[5])))
elif cmd == 'heavy':
    from celery import Celery
    app = Celery('pub', broker=url)
    app.conf.broker_transport_options = opts
    r = app.send_task('celery.accumulate', args=('x' * int(sys.argv[5]),), queue=sys.argv[4],
                      priority=int(sys.argv[6]), headers={'note': 'a "quoted" {brace} and \\ in a header'})
    print(json.dumps(r.id))
elif cmd == 'listen':
    # Binds a fanout queue to EXCHANGE (as Celery's pidbox and event receivers do), says "ready", prints
    # the first message that arrives.
    from kombu import Exchange, Queue
    ex = Exchange(sys.argv[4], type='fanout', auto_delete=True)
    q = Queue('listen-%d' % os.getpid(), ex, routing_key=sys.argv[5] if len(sys.argv) > 5 else '', auto_delete=True)
    with conn() as c:
        got = []
        with c.Consumer(q, callbacks=[lambda body, m: got.append({'body': body, 'headers': m.headers, 'delivery_info': m.delivery_info})], accept=['json']):
            print('ready')
            sys.stdout.flush()
            while not got:
                c.drain_events(timeout=20)
        print(json.dumps(got[0], default=str))
elif cmd == 'broadcast':
    from kombu import Exchange, Producer
    with conn() as c:
        ex = Exchange(sys.argv[4], type='fanout')
        Producer(c.channel()).publish({'method': 'ping'}, exchange=ex, declare=[ex],
                                      routing_key=sys.argv[5] if len(sys.argv) > 5 else '', serializer='json')
    print(json.dumps(True))
elif cmd == 'stamp':
    # stamp QUEUE N COUNTDOWN KEY [PROTOCOL]: N test.stamp tasks through Celery, each due COUNTDOWN s from now.
    import time
    from celery import Celery
    app = Celery('stamp', broker=url)
    app.conf.broker_transport_options = opts
    app.conf.task_protocol = int(sys.argv[8]) if len(sys.argv) > 8 else 1
    queue, n, countdown, key = sys.argv[4], int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
    for i in range(n):
        due = int((time.time() + countdown) * 1000)
        kw = {'key': key, 'due_ms': due}
        if countdown > 0:
            app.send_task('test.stamp', kwargs=kw, queue=queue, task_id='%s-%d' % (key, i), countdown=countdown)
        else:
            app.send_task('test.stamp', kwargs=kw, queue=queue, task_id='%s-%d' % (key, i))
    print(json.dumps(n))
