mod against_rg;
mod behaviour;
mod long_lines_rg;
