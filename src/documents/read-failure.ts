/** How reading failed, as the parent needs to know it. */
export class ReadFailure extends Error {
  constructor(
    /**
     * too_large: past a size bound before or while unpacking (a zip bomb, a part too big, an
     * image of too many pixels); cpu: OCR took its CPU time.
     */
    readonly kind: 'encrypted' | 'unreadable' | 'memory' | 'too_large' | 'cpu',
    message: string,
  ) {
    super(message);
  }
}
