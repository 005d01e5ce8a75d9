/* SPDX-License-Identifier: BSD-3-Clause */
#include "app.h"

int main(int argc, char **argv)
{
	return lrx_app_main(argc, argv);
}
