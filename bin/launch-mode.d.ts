// Types of bin/launch-mode.js (plain JavaScript: bin/imgpipe.js runs it before tsx is loaded, if ever).
export declare const ROOT: string;
export declare const BUILD_FILES: string[];
export declare function isBundleCurrent(root?: string): boolean;
export declare function launchMode(
  env?: Record<string, string | undefined>,
  root?: string,
): 'bundle' | 'sources';
