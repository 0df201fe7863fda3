// What Docusaurus does with an MDX page, in small: the page (docs/embedding/docusaurus.mdx,
// compiled by @mdx-js/mdx into ./docusaurus.mdx.js) is rendered to HTML on the server, then
// hydrated in the browser, where links navigate client-side (pushState) between it and another
// page. The element's script is not in the bundle: the page's head loads it (the `scripts` of
// docusaurus.config.js), so the element takes its site from beside its own file.
import { useRouter } from './router.jsx';
import Snippet from './docusaurus.mdx.js';

export function App({ initialPath }) {
  const [path, link] = useRouter(initialPath);
  return (
    <>
      <nav>{link('/mdx/', 'nav-playground', 'Playground')} {link('/mdx/other', 'nav-other', 'Another page')}</nav>
      <main>{path.endsWith('/other') ? <p id="other">Another page, without a playground.</p> : <Snippet />}</main>
    </>
  );
}
