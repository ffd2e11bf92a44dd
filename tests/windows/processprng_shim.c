/*
 * TEST-ONLY shim, never shipped: bcryptprimitives.dll exporting ProcessPrng for Wine 8.
 *
 * The Rust standard library gets random bytes on Windows from ProcessPrng in
 * bcryptprimitives.dll (Windows 10 and later). Wine 8.0 (Debian 12's) has no such DLL, so a Rust
 * .exe stops at load there. scripts/build-windows.sh builds this file with mingw-w64 into
 * target/x86_64-pc-windows-gnu/wine-shim/bcryptprimitives.dll, and tests/windows/wine_smoke.py
 * copies it beside workbench.exe in a temporary folder; release archives and the bundle never
 * contain it (scripts/package-archive.sh refuses a folder that holds it).
 *
 * ProcessPrng(pbData, cbData) fills the buffer and always returns TRUE; here it calls
 * RtlGenRandom (advapi32's SystemFunction036, which Wine implements) in chunks of at most
 * ULONG bytes, and returns FALSE if that fails.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffffUL ? 0x7fffffffUL : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
