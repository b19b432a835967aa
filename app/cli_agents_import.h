#pragma once

#include <QString>
#include <QTextStream>

namespace autocomp::cli {

// `autocomp agents import DIR`: takes an agent folder as Autocomp's agent builder writes it (agent_config.yaml
// with agent_name/built_at/build, optimization_menu.yaml, translation_menu.yaml with `strategies:`, rules.yaml,
// architecture.md, isa_docs.md, code_examples.md) or as ours are. It loads the folder first (every file; a file
// that cannot load is named with its line, and nothing is copied), copies the files into the user's data
// directory (agents/NAME, NAME from --name, else the config's agent_name or name, else the folder's name),
// loads the copy again, prints what each file holds, which target the agent fits, and the start of a plan
// prompt built from it. An agent of that name already there is replaced only with `overwrite`.
// Returns 0, 1 (cannot load, cannot copy) or 2 (usage: no such folder, bad name, name taken).
int agentsImport(const QString &dir, const QString &name, const QString &target, bool overwrite, QTextStream &out,
                 QTextStream &err);

} // namespace autocomp::cli
