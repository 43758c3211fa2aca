/**
 * The data of each event in a text/event-stream body, as the HTML standard's event-stream format defines it
 * (html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation): lines end in CRLF, LF
 * or CR; `data:` lines of one event are joined with newlines; a blank line ends the event; a line that starts
 * with a colon is a comment (a keep-alive) and carries nothing. Other fields (event, id, retry) are not used here.
 */
export async function* eventData(body: AsyncIterable<Uint8Array>, limitBytes = 1 << 20): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  /** The data lines of one event count against the limit too: a stream of lines with no blank one would grow without end. */
  let dataChars = 0;
  let skipLf = false;
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    if (pending.length > limitBytes) throw new Error(`an event longer than ${limitBytes} bytes`);
    let start = 0;
    for (let i = 0; i < pending.length; i++) {
      const c = pending.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && skipLf && i === start) {
        skipLf = false;
        start = i + 1;
        continue;
      }
      const line = pending.slice(start, i);
      skipLf = c === 13;
      start = i + 1;
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
        dataChars = 0;
      } else if (line.startsWith('data')) {
        const value = line.length === 4 ? '' : line[4] === ':' ? line.slice(line[5] === ' ' ? 6 : 5) : null;
        if (value !== null) {
          dataChars += value.length + 1;
          if (dataChars > limitBytes) throw new Error(`an event longer than ${limitBytes} bytes`);
          data.push(value);
        }
      }
    }
    pending = pending.slice(start);
  }
}
