/** The session cookie's name: the browser's credential on account and org endpoints. */
export const SESSION_COOKIE = "service_session"
