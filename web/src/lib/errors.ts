import type { CombinedError } from 'urql';

/**
 * An API error in words: the service's own message (its errors say what was wrong and which field), with the
 * error code for searching the docs; a transport failure says the service could not be reached.
 */
export function errorText(error: CombinedError | Error | null | undefined): string | null {
  if (!error) return null;
  const combined = error as CombinedError;
  if (combined.graphQLErrors?.length) {
    return combined.graphQLErrors
      .map((e) => {
        const code = typeof e.extensions?.code === 'string' ? e.extensions.code : null;
        const param = typeof e.extensions?.param === 'string' ? ` (field: ${e.extensions.param})` : '';
        return `${e.message}${param}${code ? ` [${code}]` : ''}`;
      })
      .join('\n');
  }
  if (combined.networkError) {
    const status = (combined.response as Response | undefined)?.status;
    if (status === 401) return 'The API key was refused: sign out and enter a valid secret key.';
    if (status === 429) return 'Too many requests for this key: wait a moment and try again.';
    return `Cadence could not be reached (${combined.networkError.message}).`;
  }
  return error.message;
}

/** True when the answer says the key is not (or no longer) valid: the caller then asks for a key again. */
export function isAuthError(error: CombinedError | null | undefined): boolean {
  if (!error) return false;
  if ((error.response as Response | undefined)?.status === 401) return true;
  return error.graphQLErrors?.some((e) => e.extensions?.code === 'invalid_api_key') ?? false;
}
