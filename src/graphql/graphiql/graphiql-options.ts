/**
 * What GraphiQL opens with, decided per page request (Yoga's `graphiql` option as a function).
 *
 * GraphiQL keeps its tabs in the browser's local storage and, on a later visit, restores them
 * instead of `defaultTabs`. Which tab it then opens is the one holding its `initialQuery` (by
 * default the text last typed into the editor, stored as well); when no tab holds that query, it
 * adds a tab with it. Left to that, a developer who had only run the examples came back to a new
 * empty "<untitled>" tab (nothing was typed, so nothing matched), and one who had typed came back
 * to their own last query; either way, not to a runnable example.
 *
 * So a visit to `/graphql` sets `initialQuery` to the example: GraphiQL opens the stored tab that
 * still holds it unchanged, or adds it as a new tab when the developer edited or closed it. Every
 * other stored tab stays as it was. A URL that carries `?query=` (GraphiQL writes the query being
 * edited into the address bar, so a reload or a shared link) opens that query instead, as Yoga's
 * page does by itself.
 */
import type { GraphiQLOptions } from 'graphql-yoga';
import { GRAPHIQL_EXAMPLE_QUERY, GRAPHIQL_TABS } from './graphiql-example.js';

/**
 * Yoga's options plus two props of GraphiQL itself, which Yoga's page hands on to the GraphiQL
 * component (after its own, so they win) although Yoga's type does not list them.
 */
export type GraphiQLPageOptions = GraphiQLOptions & {
  initialQuery?: string;
  /**
   * With the example, no variables: otherwise GraphiQL matches the stored example tab against
   * the variables last typed in any tab, and adds a second example tab when they differ.
   */
  initialVariables?: string;
  /**
   * The text of the page's `<title>`. Yoga's bundle draws `title` as markup in the corner of
   * GraphiQL, where ours carries the link to the REST reference; the browser's tab shows this.
   */
  pageTitle?: string;
};

const PAGE_TITLE = 'Name profiles: GraphQL';

// No `defaultQuery`: GraphiQL reads it only when there are no `defaultTabs`.
const TABS: GraphiQLPageOptions = {
  pageTitle: PAGE_TITLE,
  // Relative to /graphql, as the page's assets are, so it holds behind a path prefix too.
  title: `${PAGE_TITLE} · <a href="api/docs">REST API reference</a>`,
  defaultTabs: GRAPHIQL_TABS,
};

const OPEN_ON_THE_EXAMPLE: GraphiQLPageOptions = {
  ...TABS,
  initialQuery: GRAPHIQL_EXAMPLE_QUERY,
  initialVariables: '',
};

/** The options of the GraphiQL page that answers `request` (a browser's `GET /graphql`). */
export function graphiqlOptions(request: Request): GraphiQLPageOptions {
  return new URL(request.url).searchParams.has('query') ? TABS : OPEN_ON_THE_EXAMPLE;
}
