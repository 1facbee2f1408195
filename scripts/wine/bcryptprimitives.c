/* Test infrastructure only, never shipped: Wine 8 has no
 * bcryptprimitives.dll ProcessPrng, which Go 1.24+ Windows programs load
 * at start. This shim gives it over advapi32's SystemFunction036
 * (RtlGenRandom). cmd/darman's Wine tests build it with
 * x86_64-w64-mingw32-gcc and put it in the Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
