// For a page that embeds the Service Bus Playground: each playground frame reports its height
// (an `sbp-size` message); this sizes the frame to it. Included by the embed code.
addEventListener('message', (e) => {
  if (!e.data || e.data.type !== 'sbp-size') return;
  for (const f of document.querySelectorAll('iframe')) {
    if (f.contentWindow === e.source) f.style.height = `${e.data.height}px`;
  }
});
