/**
 * The HTTP methods a path item can hold, in the order the OpenAPI specification lists them. On
 * its own, importing nothing: the spec diff's compiled command shares it.
 */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
