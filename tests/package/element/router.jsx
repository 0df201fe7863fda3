// Client-side navigation as a documentation site's router does it: links that push a history
// entry and re-render without a reload; Back re-renders too.
import { useEffect, useState } from 'react';

// The current path, and a link component to another one.
export function useRouter(initialPath) {
  const [path, setPath] = useState(initialPath);
  useEffect(() => {
    const back = () => setPath(location.pathname);
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  const link = (to, id, text) => (
    <a id={id} href={to} onClick={(e) => { e.preventDefault(); history.pushState(null, '', to); setPath(to); }}>{text}</a>
  );
  return [path, link];
}
