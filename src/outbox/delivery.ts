/**
 * How a sender reports a delivery that did not happen. `message` is kept on the outbox row for the merchant
 * (`storefront outbox`); `logReason` is what the log may say: never an address, a URL or anything a buyer typed.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly logReason: string,
    /** False when trying again cannot help (a mail server that refuses the address for good). */
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}
