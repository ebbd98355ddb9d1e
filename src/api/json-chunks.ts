import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';
import { TimeSlicer } from '../common/time-slice';

/**
 * A JSON answer given as its text in parts (a mebibyte or so each), encoded a slice at a time and
 * written as the socket takes them: an 8 MiB results page encoded and written as one string held
 * the event loop for about 60 ms. The parts are all made before anything is sent, so an error
 * while reading still answers with its own status.
 */
export async function jsonInParts(parts: Iterable<string>): Promise<StreamableFile> {
  const slicer = new TimeSlicer();
  const chunks: Buffer[] = [];
  let length = 0;
  for (const part of parts) {
    const chunk = Buffer.from(part);
    chunks.push(chunk);
    length += chunk.length;
    if (slicer.due()) await slicer.turn();
  }
  return new StreamableFile(Readable.from(chunks), { type: 'application/json; charset=utf-8', length });
}

/** The parts of a JSON list whose items come in groups: `head`, the items, `tail`. */
export function* listParts(head: string, groups: string[][], tail: string): Generator<string> {
  yield head;
  for (const [i, group] of groups.entries()) yield `${i > 0 ? ',' : ''}${group.join(',')}`;
  yield tail;
}
