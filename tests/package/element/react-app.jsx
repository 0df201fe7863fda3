// A React single-page app such as a documentation site built with React: two pages, client-side
// navigation between them (pushState, no reload), the playground element on one. It imports the
// package as a bundler does (`import 'service-bus-playground'`), so the element's file is inside
// the bundle and the site is named by the `site` attribute.
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useRouter } from './router.jsx';
import 'service-bus-playground';

const SITE = '/docs/playground/site/';

function Playground() {
  const [lang, setLang] = useState('en');
  return (
    <>
      <h1>Message expiration</h1>
      <button id="to-de" type="button" onClick={() => setLang('de')}>Deutsch</button>
      <service-bus-playground id="pg" site={SITE} preset="ttl-expiry-to-dlq" autoplay
        panels="lanes,log" lang={lang} height="300" />
    </>
  );
}

function App() {
  const [path, link] = useRouter(location.pathname);
  return (
    <>
      <nav>{link('/react/', 'nav-playground', 'Playground')} {link('/react/other', 'nav-other', 'Another page')}</nav>
      {path.endsWith('/other') ? <p id="other">Another page, without a playground.</p> : <Playground />}
    </>
  );
}

createRoot(document.getElementById('root')).render(<App />);
