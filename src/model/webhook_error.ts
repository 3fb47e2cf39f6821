/**
 * The error of a review that a webhook server cannot answer with a review response: admission and
 * conversion reviews alike.
 *
 * Pure: no I/O.
 *
 * @module
 */

/**
 * A malformed or unservable review: the webhook server answers with the HTTP `status` (400 for
 * malformed reviews, 404 for unknown resources or handlers, 409 for ambiguous resources, 413 for
 * too large bodies) and the message.
 */
export class WebhookError extends Error {
  /** The HTTP status code to answer with. */
  readonly status: number;

  /**
   * Makes the error.
   *
   * @param status the HTTP status code.
   * @param message what is wrong with the review.
   */
  constructor(status: number, message: string) {
    super(message);
    this.name = "WebhookError";
    this.status = status;
  }
}
