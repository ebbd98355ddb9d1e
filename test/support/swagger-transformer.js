// Adapts the @nestjs/swagger build plugin to ts-jest's transformer interface, so tests compile DTOs
// exactly as `nest build` does and see the same OpenAPI document.
const plugin = require('@nestjs/swagger/plugin');

module.exports = {
  name: 'nestjs-swagger-plugin',
  version: '1',
  factory: (tsCompiler, options) => plugin.before(options, tsCompiler.program),
};
