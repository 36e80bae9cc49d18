// The part of the 'jfrog-workers' package's types the example worker uses, for compiling it
// here without the package (the runtime provides the real context). Same shapes as the
// package's PlatformContext. SPDX-License-Identifier: GPL-3.0-or-later
export interface IPlatformHttpResponse {
    data: any;
    status: number;
    headers: { [key: string]: string | string[] };
}
export interface PlatformHttpClient {
    get(endpoint: string, headers?: { [key: string]: string }): Promise<IPlatformHttpResponse>;
    post(endpoint: string, data?: any, headers?: { [key: string]: string }): Promise<IPlatformHttpResponse>;
    put(endpoint: string, data?: any, headers?: { [key: string]: string }): Promise<IPlatformHttpResponse>;
    patch(endpoint: string, data?: any, headers?: { [key: string]: string }): Promise<IPlatformHttpResponse>;
    delete(endpoint: string, headers?: { [key: string]: string }): Promise<IPlatformHttpResponse>;
}
export interface AxiosLike {
    post(url: string, data?: any, config?: {
        headers?: { [key: string]: string };
        timeout?: number;
        validateStatus?: (status: number) => boolean;
    }): Promise<{ status: number; data: any }>;
}
export interface PlatformSecrets {
    get(key: string): string;
}
export interface PlatformContext {
    clients: { platformHttp: PlatformHttpClient; axios: AxiosLike };
    secrets: PlatformSecrets;
    platformToken: string;
    baseUrl: string;
    wait(delayMs: number): Promise<void>;
}
