// The browser's side of mdx-app.jsx: hydrates the server's HTML; what React could not hydrate
// (a mismatch) is kept in window.__recoverable for the test to read.
import { hydrateRoot } from 'react-dom/client';
import { App } from './mdx-app.jsx';

window.__recoverable = [];
hydrateRoot(document.getElementById('root'), <App initialPath={location.pathname} />, {
  onRecoverableError: (e) => window.__recoverable.push(String(e && e.message || e)),
});
