// Starts the page's WebAssembly without an inline script, so the Content-Security-Policy can forbid
// every inline script. Trunk writes this file's URL with the hashed names of the app's JS and wasm
// (Trunk.toml: pattern_script), e.g. boot.js?js=profile-model-1a2b.js&wasm=profile-model-1a2b_bg.wasm.
const here = new URL(import.meta.url);
const param = (key) => {
  const value = here.searchParams.get(key);
  if (!value) throw new Error(`boot.js: no ${key} in ${here}`);
  return new URL(value, here);
};
const { default: init } = await import(param('js'));
await init({ module_or_path: param('wasm') });
