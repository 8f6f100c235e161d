from authoring.cli import app

app(prog_name="taskforge")
