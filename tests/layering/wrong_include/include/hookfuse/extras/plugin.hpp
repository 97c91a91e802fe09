// Fixture of layering.wrong_include (not compiled): a folder README.md's Layers does not list.
#pragma once
