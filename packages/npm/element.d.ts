// Types of <service-bus-playground> for TypeScript: the element in the DOM's tag map, and its
// attributes in JSX (the global JSX namespace: Preact, Solid, React 18 with global JSX). React
// 19's JSX lives in React's own module: `import type {} from 'service-bus-playground/react'`.

/** The attributes of `<service-bus-playground>` (each is passed on URL-encoded). */
export interface ServiceBusPlaygroundAttributes {
  /** A preset, by name (`ttl-expiry-to-dlq`). */
  preset?: string;
  /** A lesson, by id (`max-delivery-count`). */
  lesson?: string;
  /** A share link from the playground, or just its `#fragment`. */
  scenario?: string;
  /** Where the clock starts (`90s`, `2m`), with a preset or a scenario. */
  instant?: string;
  /** The clock's speed: 1, 10, 60, 100, 1000, 10000 or 100000. */
  speed?: string | number;
  /** Plays at once (present: on, unless `false`, `0`, `off` or `no`). */
  autoplay?: boolean | string;
  /** Starts again once nothing more is due. */
  loop?: boolean | string;
  /** `map`, `lanes`, `log`, `controls`, comma-separated. */
  panels?: string;
  /** `en`, `de`, `nl` or `sv`. */
  lang?: string;
  /** The frame's height in px until the playground reports its own (default 480). */
  height?: string | number;
  /** Where the site is: its folder or its index.html. */
  site?: string;
  /** The same as `site`. */
  src?: string;
  /** The frame's title for assistive technology. */
  label?: string;
  /** The frame's loading: `lazy` (default) or `eager`. */
  loading?: 'lazy' | 'eager';
  id?: string;
  class?: string;
  className?: string;
  hidden?: boolean;
  style?: unknown;
  slot?: string;
  key?: string | number;
  ref?: unknown;
  children?: unknown;
}

declare global {
  interface HTMLElementTagNameMap {
    'service-bus-playground': HTMLElement;
  }
  namespace JSX {
    interface IntrinsicElements {
      'service-bus-playground': ServiceBusPlaygroundAttributes;
    }
  }
}
