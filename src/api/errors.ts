/**
 * Typed errors of the API client: one class per HTTP status that callers treat differently.
 *
 * @module
 */

/** The `Status` object that Kubernetes sends with most error responses. */
export interface ApiStatus {
  /** `Status`. */
  kind?: string;
  /** `v1`. */
  apiVersion?: string;
  /** `Failure` or `Success`. */
  status?: string;
  /** What went wrong, in words. */
  message?: string;
  /** Why, in one CamelCase word: `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ... */
  reason?: string;
  /** The HTTP status code. */
  code?: number;
  /** More about the object concerned: its name, kind, the invalid fields (`causes`), when to retry. */
  details?: { retryAfterSeconds?: number; [key: string]: unknown };
}

/**
 * The API server answered with an error status; the subclasses name the statuses that callers
 * treat differently.
 *
 * @example
 * ```ts ignore
 * try {
 *   await api.create(child);
 * } catch (error) {
 *   if (!(error instanceof kopf.ApiConflictError)) throw error; // 409, reason "AlreadyExists"
 * }
 * ```
 */
export class ApiError extends Error {
  /** The HTTP status code, e.g. 404 (as Kopf's `APIError.status`). */
  readonly status: number;
  /** The HTTP status code; the same as `status`. */
  readonly code: number;
  /** Kubernetes' machine-readable reason (`NotFound`, `Conflict`, `AlreadyExists`, `Invalid`, ...), if it sent one. */
  readonly reason: string | undefined;
  /** The decoded `Status` body, if the response had one: its `message`, `details` (e.g. the invalid fields). */
  readonly payload: ApiStatus | undefined;

  /** Wraps a failed response; `what` says which request failed (verb and path). */
  constructor(what: string, code: number, status: ApiStatus | undefined, text?: string) {
    const detail = status?.message ?? text?.trim().slice(0, 300) ?? "";
    super(`${what} failed with HTTP ${code}${status?.reason ? ` ${status.reason}` : ""}${detail ? `: ${detail}` : ""}`);
    this.name = new.target.name;
    this.status = code;
    this.code = code;
    this.reason = status?.reason;
    this.payload = status;
  }
}

/** 400: the request is malformed (a bad patch, an invalid selector). */
export class ApiBadRequestError extends ApiError {}
/** 401: the credentials were refused; they are invalidated and resolved anew before a retry. */
export class ApiUnauthorizedError extends ApiError {}
/** 403: RBAC forbids this request; grant the operator's service account the verb on the resource. */
export class ApiForbiddenError extends ApiError {}
/** 404: the object or the resource does not exist (any more). */
export class ApiNotFoundError extends ApiError {}
/** 409: a conflict, e.g. an outdated resourceVersion or an object that already exists. */
export class ApiConflictError extends ApiError {}
/** 410: the resourceVersion is too old (compacted); a watch must relist. */
export class ApiGoneError extends ApiError {}
/** 422: the object is invalid, or a JSON-patch `test` operation failed. */
export class ApiUnprocessableError extends ApiError {}
/** 429: too many requests, still refused after all retries. */
export class ApiTooManyRequestsError extends ApiError {
  /** Seconds the server asked to wait (its `Retry-After`), if it said. */
  retryAfter: number | undefined;
}
/** 5xx: the server failed, still after all retries. */
export class ApiServerError extends ApiError {}

const BY_CODE: Record<number, typeof ApiError> = {
  400: ApiBadRequestError,
  401: ApiUnauthorizedError,
  403: ApiForbiddenError,
  404: ApiNotFoundError,
  409: ApiConflictError,
  410: ApiGoneError,
  422: ApiUnprocessableError,
  429: ApiTooManyRequestsError,
};

/** Builds the error class that fits an HTTP status code. */
export function apiErrorFor(what: string, code: number, status: ApiStatus | undefined, text?: string): ApiError {
  const cls = BY_CODE[code] ?? (code >= 500 ? ApiServerError : ApiError);
  return new cls(what, code, status, text);
}

/** The API server could not be reached (refused, reset, TLS failure, timeout), still after all retries. */
export class ApiConnectionError extends Error {
  /**
   * Wraps the last network failure; `what` says which request failed, `diagnosis` (if known)
   * what is wrong in a user's words and what to do.
   */
  constructor(what: string, cause: unknown, diagnosis?: string) {
    super(`${what} could not reach the API server: ${diagnosis ?? describeCause(cause)}`, { cause });
    this.name = "ApiConnectionError";
  }
}

/** A short description of a network failure, including the nested causes Deno's fetch attaches. */
export function describeCause(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  while (current instanceof Error && parts.length < 4) {
    const text = current.message || current.name;
    if (!parts.some((part) => part.includes(text))) parts.push(text);
    current = current.cause;
  }
  if (parts.length === 0) parts.push(String(cause));
  return parts.join(": ");
}
