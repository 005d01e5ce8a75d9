// SPDX-License-Identifier: BSD-3-Clause
// pcap reader harness: the emulated NIC's pcap=FILE reader
// (synth_pcap_load, pmd/net_synth/synth_gen.c) on arbitrary bytes written
// to a file (in memory: a memfd opened by its /proc/self/fd path). Must
// never crash; a failure is -EINVAL or -ENOMEM; a success
// has at least one frame and every frame lies inside the loaded data with
// a length the driver accepts (14..SYNTH_MAX_FRAME bytes).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "fuzz_common.h"

extern "C" {
#include "synth.h"
}

static lrx_fuzz::MemFile *file; // the "pcap file", in memory
static synth_device *dev;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_pcap");
	file = new lrx_fuzz::MemFile("fuzz_pcap");
	dev = static_cast<synth_device *>(std::calloc(1, sizeof(*dev)));
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	file->write(data, size);

	std::memset(dev, 0, sizeof(*dev));
	std::snprintf(dev->name, sizeof(dev->name), "net_synth_fuzz");
	std::snprintf(dev->opt.pcap, sizeof(dev->opt.pcap), "%s", file->path);
	int rc = synth_pcap_load(dev);
	if (rc != 0 && rc != -EINVAL && rc != -ENOMEM)
		lrx_fuzz::fail("synth_pcap_load returned %d", rc);
	if (rc == 0) {
		if (dev->nb_pcap_frames == 0)
			lrx_fuzz::fail("loaded a pcap without frames");
		uint64_t sum = 0;
		for (uint32_t i = 0; i < dev->nb_pcap_frames; i++) {
			const synth_pcap_frame &fr = dev->pcap_frames[i];
			if (fr.len < 14 || fr.len > SYNTH_MAX_FRAME ||
			    fr.data < dev->pcap_data ||
			    fr.data + fr.len > dev->pcap_data + size)
				lrx_fuzz::fail("frame %u out of bounds", i);
			sum += fr.data[0] + fr.data[fr.len - 1]; // ASan checks the reads
		}
		(void)sum;
	}
	// the driver frees these at close, on failure too
	std::free(dev->pcap_frames);
	std::free(dev->pcap_data);
	return 0;
}
