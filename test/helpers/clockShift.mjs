// Loaded with --import into a studio process a test starts, to give it a wrong wall clock: Date.now() and
// new Date() run CLOCK_SHIFT_MS ahead (behind when negative). The monotonic clock, like a real machine's, is untouched.
const shift = Number(process.env.CLOCK_SHIFT_MS ?? 0);
const RealDate = Date;

class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + shift);
    else super(...args);
  }

  static now() {
    return RealDate.now() + shift;
  }
}

globalThis.Date = ShiftedDate;
