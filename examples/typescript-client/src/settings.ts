/** Where the service is and the app's API key, from the environment. */
export interface Settings {
  /** The service's base URL, e.g. https://names.example.org. */
  readonly serviceUrl: string;
  /** The app's API key (`npm run keys -- create …` on the service); without one, the per-IP budgets apply. */
  readonly apiKey: string | undefined;
}

export function settingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): Settings {
  return {
    serviceUrl: env.SERVICE_URL ?? 'http://127.0.0.1:4000',
    apiKey: env.API_KEY || undefined,
  };
}

/** The headers that carry the API key, on REST, GraphQL and the event streams alike. */
export function authorization(settings: Settings): Record<string, string> {
  return settings.apiKey === undefined ? {} : { authorization: `Bearer ${settings.apiKey}` };
}
