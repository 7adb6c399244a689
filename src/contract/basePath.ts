/** The path a server URL ends in, without a trailing slash: `https://api.example/v1/` → `/v1`, `http://host` → ''. */
export const basePathOfUrl = (url: string): string => new URL(url, 'http://placeholder').pathname.replace(/\/+$/, '');
