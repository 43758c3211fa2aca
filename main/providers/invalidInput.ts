/** An input the provider would refuse; `field` names the input field at fault, where one is (so a caller can say where it came from). */
export class InvalidInput extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A request that is fine but has no key to be sent with; a Generate asks for the key, an estimate prices it anyway. */
export class MissingKey extends InvalidInput {
  constructor(
    readonly provider: string,
    readonly variable: string,
  ) {
    super(`no API key for ${provider}: add it in Settings or set ${variable}`);
  }
}
