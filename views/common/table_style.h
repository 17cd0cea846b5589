#pragma once
// The look every list-like table of the workbench shares: whole rows selected one at a
// time, read-only, alternating rows without a grid, no row numbers, one line per row of
// the font's height plus `rowPadding`, a header that does not light up with the selection.

class QTableView;

namespace lathe::views {

void styleListTable(QTableView* table, int rowPadding = 6);

} // namespace lathe::views
