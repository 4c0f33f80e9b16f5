/**
 * Small helpers for tests that talk to a running simulator with `fetch`.
 */

export interface GraphQLReply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: {
    data?: T | null;
    errors?: {
      type?: string;
      message: string;
      path?: (string | number)[];
      extensions?: Record<string, unknown>;
      locations?: { line: number; column: number }[];
    }[];
    message?: string;
  };
}

/** POSTs a GraphQL query to `${url}/graphql` with a bearer token. */
export async function postGraphQL<T = Record<string, unknown>>(
  url: string,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GraphQLReply<T>> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization: `bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(variables === undefined ? { query } : { query, variables }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphQLReply<T>['body'],
  };
}
