// For a page that embeds the Service Bus Playground: each playground frame reports its height
// (an `sbp-size` message); this sizes the frame to it. Included by the embed code.
// A message counts only from the frame it names itself by (its window), only from that frame's
// own origin, only for a playground's frame (`?embed=` in its address), and only with a finite
// height within bounds: another frame or window on the host page cannot resize anything, nor a
// playground frame beyond the bounds.
(() => {
  const MIN_HEIGHT = 100;
  const MAX_HEIGHT = 10000;
  addEventListener('message', (e) => {
    const data = e.data;
    if (!data || typeof data !== 'object' || data.type !== 'sbp-size') return;
    const height = data.height;
    if (typeof height !== 'number' || !Number.isFinite(height)) return;
    if (height < MIN_HEIGHT || height > MAX_HEIGHT) return;
    for (const f of document.querySelectorAll('iframe')) {
      if (f.contentWindow !== e.source) continue;
      let address;
      try {
        address = new URL(f.src, location.href);
      } catch {
        return;
      }
      if (address.origin !== e.origin) return;
      // Only a playground's frame (its address asks for the embedded view): another frame on
      // the page that speaks this message is not resized.
      if (!address.searchParams.has('embed')) return;
      f.style.height = `${Math.round(height)}px`;
    }
  });
})();
