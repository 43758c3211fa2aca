/** An input the provider would refuse; `field` names the input field at fault, where one is (so a caller can say where it came from). */
export class InvalidInput extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}
