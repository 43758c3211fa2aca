// Loaded with --import into a studio process a test starts, to give it a wrong wall clock: Date.now() and
// new Date() run CLOCK_SHIFT_MS ahead (behind when negative). With CLOCK_JUMP_MS the clock is then stepped by that
// much CLOCK_JUMP_AFTER_MS after the process starts, as a clock set by hand or by network time. The monotonic
// clock, like a real machine's, is untouched.
const shift = Number(process.env.CLOCK_SHIFT_MS ?? 0);
const jump = Number(process.env.CLOCK_JUMP_MS ?? 0);
const jumpAfter = Number(process.env.CLOCK_JUMP_AFTER_MS ?? 0);
const RealDate = Date;
const started = RealDate.now();
const offset = () => shift + (jump !== 0 && RealDate.now() - started >= jumpAfter ? jump : 0);

class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset());
    else super(...args);
  }

  static now() {
    return RealDate.now() + offset();
  }
}

globalThis.Date = ShiftedDate;
