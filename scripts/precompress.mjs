// Copies the site SRC to DST with each text and wasm file's brotli and gzip forms beside it
// (FILE.br, FILE.gz): what the `sbp` binary carries and serves from memory in the encoding
// the browser takes. Usage: node scripts/precompress.mjs SRC DST
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const [src, dst] = process.argv.slice(2);
if (!src || !dst) {
  console.error('usage: node scripts/precompress.mjs SRC DST');
  process.exit(2);
}
const COMPRESSED = /\.(html|js|mjs|css|wasm|svg|json|ftl|txt|map)$/;
fs.rmSync(dst, { recursive: true, force: true });
fs.cpSync(src, dst, { recursive: true });
let plain = 0, brotli = 0;
for (const entry of fs.readdirSync(dst, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COMPRESSED.test(entry.name)) continue;
  const file = path.join(entry.parentPath ?? entry.path, entry.name);
  const bytes = fs.readFileSync(file);
  const br = zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
  const gz = zlib.gzipSync(bytes, { level: 9 });
  // A form no smaller than the file is not worth a request's decoding.
  if (br.length < bytes.length) fs.writeFileSync(`${file}.br`, br);
  if (gz.length < bytes.length) fs.writeFileSync(`${file}.gz`, gz);
  plain += bytes.length;
  brotli += Math.min(br.length, bytes.length);
}
console.log(`${dst}: ${(plain / 1024).toFixed(0)} KiB of text and wasm, ${(brotli / 1024).toFixed(0)} KiB as brotli`);
