// <service-bus-playground> in React 19's JSX (which lives in React's module, not the global
// JSX namespace): `import type {} from 'service-bus-playground/react'` once in a TSX project.
import type { ServiceBusPlaygroundAttributes } from './element.js';

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'service-bus-playground': ServiceBusPlaygroundAttributes;
    }
  }
}
