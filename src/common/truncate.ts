/** Cuts s to at most maxBytes of UTF-8 without splitting a character. */
export function truncateUtf8(
  s: string,
  maxBytes: number,
): { text: string; bytes: number; truncated: boolean } {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no buffer at all.
  if (s.length * 3 <= maxBytes) return { text: s, bytes: Buffer.byteLength(s, 'utf8'), truncated: false };
  const bytes = Buffer.byteLength(s, 'utf8');
  if (bytes <= maxBytes) return { text: s, bytes, truncated: false };
  const buf = Buffer.from(s, 'utf8');
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) to the start of the character that would be cut.
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return { text: buf.toString('utf8', 0, end), bytes: end, truncated: true };
}
