/** A JSON value, as the engine records it in history. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
