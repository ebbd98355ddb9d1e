/**
 * A pass of work that never runs twice at once: asked while it runs, it runs once more when it
 * ends (any number of asks fold into that one). What fails is reported to `failed`.
 */
export class SerialPass {
  private running = false;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly failed: (err: Error) => void,
  ) {}

  run(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass()
      .catch(this.failed)
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.run();
        }
      });
  }
}
