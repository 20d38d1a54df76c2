// IxJS's declarations (its todomstream.d.ts, which every import of its AsyncIterableX type reaches)
// name the DOM type StreamPipeOptions, which neither lib ES2022 nor @types/node 20 declares. Declaring
// it here lets apps type-check twainmq/operators without the DOM lib and with skipLibCheck off; with
// the DOM lib (or an @types/node that declares it) the declarations merge, the members being identical.
declare global {
  /** The options of `ReadableStream.pipeTo` / `pipeThrough` (WHATWG Streams), as the DOM lib declares them. */
  interface StreamPipeOptions {
    preventAbort?: boolean
    preventCancel?: boolean
    preventClose?: boolean
    signal?: AbortSignal
  }
}

export {}
