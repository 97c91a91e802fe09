// Fixture of layering.wrong_include (not compiled): a leaf.
#pragma once
