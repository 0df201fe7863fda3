export default {
  scripts: [
    { src: '/playground/element.js', type: 'module' },
    { src: '/playground/site/embed.js', defer: true },
  ],
};
