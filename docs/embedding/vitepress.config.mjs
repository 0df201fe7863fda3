export default {
  head: [['script', { type: 'module', src: '/playground/element.js' }]],
  vue: {
    template: {
      compilerOptions: {
        isCustomElement: (tag) => tag === 'service-bus-playground',
      },
    },
  },
};
