// Fixture of layering.wrong_include (not compiled): a leaf of optim/.
#pragma once
