/** Cuts s to at most maxBytes of UTF-8 without splitting a character. */
export function truncateUtf8(
  s: string,
  maxBytes: number,
): { text: string; bytes: number; truncated: boolean } {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= maxBytes) return { text: s, bytes: buf.length, truncated: false };
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) to the start of the character that would be cut.
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return { text: buf.toString('utf8', 0, end), bytes: end, truncated: true };
}
