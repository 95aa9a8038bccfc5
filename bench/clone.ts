/** Copies of a Celery message under other task ids (pure), for the raw publisher (raw-publish.ts). */
import type { Options } from 'amqplib';

/** A text in which every occurrence of `old` strings is replaced per copy: `clone(news)` (pure). */
export function cloner(text: string, olds: readonly string[]): (news: readonly string[]) => string {
  const pieces: string[] = [];
  const slots: number[] = [];
  let rest = text;
  for (;;) {
    let at = -1;
    let which = -1;
    olds.forEach((o, i) => {
      const k = o ? rest.indexOf(o) : -1;
      if (k >= 0 && (at < 0 || k < at)) [at, which] = [k, i];
    });
    if (at < 0) break;
    pieces.push(rest.slice(0, at));
    slots.push(which);
    rest = rest.slice(at + (olds[which] ?? '').length);
  }
  pieces.push(rest);
  return (news) => pieces.reduce((out, p, i) => out + (i > 0 ? (news[slots[i - 1] ?? 0] ?? '') : '') + p, '');
}

/** A Celery (protocol 2) message's AMQP properties, as another task id would have them. */
export function cloneAmqpProperties(props: Options.Publish, id: string): Options.Publish {
  return {
    ...props,
    correlationId: id,
    headers: { ...(props.headers as Record<string, unknown> | undefined), id, root_id: id },
  };
}
