// The server's side of mdx-app.jsx: the page's HTML for the MDX route.
import { renderToString } from 'react-dom/server';
import { App } from './mdx-app.jsx';

export const render = () => renderToString(<App initialPath="/mdx/" />);
