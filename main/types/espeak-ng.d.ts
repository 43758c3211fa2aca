/** eSpeak NG compiled with Emscripten: runs its command line once per instance, output in a memory FS. */
declare module 'espeak-ng' {
  interface ESpeakInstance {
    FS: { readFile(path: string): Uint8Array };
  }
  const ESpeakNg: (module: {
    arguments: string[];
    wasmBinary?: Uint8Array;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
  }) => Promise<ESpeakInstance>;
  export default ESpeakNg;
}
