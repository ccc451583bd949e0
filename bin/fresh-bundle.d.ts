// Types of bin/fresh-bundle.js (plain JavaScript: bin/imgpipe.js runs it before tsx is loaded).
export declare const ROOT: string;
export declare const BUILD_FILES: string[];
export declare function buildInputHash(root?: string): string;
export declare function isBundleFresh(root?: string): boolean;
