/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_scenario(data, size, 0); }
