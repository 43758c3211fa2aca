/**
 * A client's stream to PostgreSQL cut into its messages (PostgreSQL's frontend/backend protocol, "Message Formats"):
 * the untyped start-up messages (an SSL or GSS request, then the start-up packet), then each message a type byte and a
 * length that counts itself but not the type.
 */
export interface FrontendMessage {
  type: string;
  body: Buffer;
}

const STARTUP_CODES = new Set([80877103, 80877104, 80877102]); // SSLRequest, GSSENCRequest, CancelRequest

export class FrontendMessages {
  private pending = Buffer.alloc(0);
  private startup = true;

  push(chunk: Buffer): FrontendMessage[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    const messages: FrontendMessage[] = [];
    for (;;) {
      const head = this.startup ? 0 : 1;
      if (this.pending.length < head + 4) return messages;
      const length = this.pending.readInt32BE(head);
      if (this.pending.length < head + length) return messages;
      const body = this.pending.subarray(head + 4, head + length);
      const type = this.startup ? '' : String.fromCharCode(this.pending[0]!);
      // Only the start-up packet itself ends the untyped part: a request before it (SSL, GSS) is answered first.
      if (this.startup && !(length >= 8 && STARTUP_CODES.has(this.pending.readInt32BE(4)))) this.startup = false;
      messages.push({ type, body });
      this.pending = this.pending.subarray(head + length);
    }
  }
}

/**
 * Whether `messages` ran a statement whose text holds `marker`: a simple Query holding it, or the Sync after a Parse
 * holding it (extended protocol: the statement runs as its Bind, Execute and Sync arrive). `armed` carries a Parse
 * seen in an earlier chunk.
 */
export function ranMarker(messages: readonly FrontendMessage[], marker: Buffer, armed: { parsed: boolean }): boolean {
  for (const { type, body } of messages) {
    if (type === 'Q' && body.includes(marker)) return true;
    if (type === 'P' && body.includes(marker)) armed.parsed = true;
    if (type === 'S' && armed.parsed) return true;
  }
  return false;
}
